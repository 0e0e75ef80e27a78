// A system built from the parsed spec it is given; a function whose name only ends like a parser's is fine.
struct PolicySpec {
  const char* name;
};
int reparse_system_spec_count(const PolicySpec& spec) { return spec.name != nullptr; }
