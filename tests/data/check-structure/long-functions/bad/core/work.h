#pragma once
namespace fixture {
int sum_long();
struct Runner {
  int run() const;
};
}  // namespace fixture
