package avsc

// Parse reads the schema JSON as Read does, but only what the output
// formats and Hive can map: the top level must be a record, no record may
// contain itself, and what Read takes in goavro's stead (a union directly
// inside a union, a name defined twice, a fixed without a valid size, ...)
// is refused. The first problem in the text is the error. It is Read's
// mapErr as an error, and ParseStrict without the strictness.
func Parse(text string) (*Node, error) { return mappable(read(text, false)) }
