// A parser of SPEC_PARSERS: it reads a run's options and parses each spec once.
struct PolicySpec {
  static PolicySpec parse(const char* text);
};
PolicySpec routing_of(const char* option) { return PolicySpec::parse(option); }
