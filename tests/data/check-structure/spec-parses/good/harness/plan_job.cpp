// Takes the spec parsed where it was read; a comment may say PolicySpec::parse( without parsing anything.
struct PolicySpec {
  const char* name;
};
const char* planner_of(const PolicySpec& system) { return system.name; }
