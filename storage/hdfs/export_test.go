package hdfs

// Describe checks opts and says what security a connection would use,
// without connecting (Check, which check uses, says it too).
func Describe(opts Options) (Security, error) {
	_, sec, err := clientOptions(opts)
	return sec, err
}

// Resolve finds the NameNodes opts.URL names (see resolve).
func Resolve(opts Options) (Target, error) {
	t, _, err := resolve(opts)
	return t, err
}
