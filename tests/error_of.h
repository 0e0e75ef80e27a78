// The message of the moesim::Error that `f` throws; a test failure (and "") when it throws none.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace moesim::test {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a moesim::Error";
  return "";
}

}  // namespace moesim::test
