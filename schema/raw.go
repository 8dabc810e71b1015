package schema

// Raw is a registry schema of any type as the registry stores it: what a
// converter that reads Protobuf (or JSON Schema) parses itself. Avro
// schemas reach the sink as Schema; Raw is for the others.
type Raw struct {
	// Type is the registry's schemaType: "PROTOBUF", "JSON", or "AVRO"
	// (an empty schemaType is Avro, the Confluent API's default).
	Type string
	// Text is the schema as registered: .proto source for Protobuf.
	Text string
	// References are the schemas this one imports, by the name its text
	// uses for them (a Protobuf import path).
	References []Reference
}

// Reference names a registered schema another imports: Confluent's
// {"name", "subject", "version"}.
type Reference struct {
	Name    string
	Subject string
	Version int
}
