#pragma once
namespace fixture {
int sum_exact();
class Holder {
 public:
  int inline_method() const { return 1; }
};
}  // namespace fixture
