#pragma once
// The body of a program's main(): an exception nothing else caught (a
// library's set-up, out of memory) ends the program with its message on
// stderr and status 1, never with std::terminate's abort. Bad input gets a
// message and a non-zero exit, not a crash.

#include <cstdio>
#include <exception>

namespace unetback::util {

template <class Body>
int guarded_main(const char* program, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unknown error\n", program);
  }
  return 1;
}

}  // namespace unetback::util
