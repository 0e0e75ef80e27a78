// A serving file that parses the system spec of its config.
struct PolicySpec {
  const char* name;
};
PolicySpec system_of(const char* text) {
  return parse_system_spec (text);
}
