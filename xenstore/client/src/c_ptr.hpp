#pragma once
// Every libxenstore result is malloc'ed (xenstore.h): it goes into a c_ptr,
// which frees it, at once.

#include <cstdlib>
#include <memory>

namespace unetback::xs {

struct free_deleter {
  // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): libxenstore allocates with malloc
  void operator()(void* p) const noexcept { std::free(p); }
};

template <class T>
using c_ptr = std::unique_ptr<T, free_deleter>;

}  // namespace unetback::xs
