// The command line reads options: it parses a spec where it reads it (outside the folders the rule checks).
struct PolicySpec {
  static PolicySpec parse(const char* text);
};
PolicySpec system_of(const char* option) { return PolicySpec::parse(option); }
