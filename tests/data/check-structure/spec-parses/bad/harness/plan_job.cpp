// A job that turns a spec back into text and parses it again, as a policy spec and as a system spec.
struct PolicySpec {
  static PolicySpec parse(const char* text);
};
PolicySpec again(const char* text) { return PolicySpec::parse(text); }
PolicySpec system_again(const char* text) { return harness::parse_system_option(text); }
