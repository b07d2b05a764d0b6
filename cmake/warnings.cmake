# Every target of ours links unetback_warnings: warnings are errors, conversions included.
add_library(unetback_warnings INTERFACE)
target_compile_options(unetback_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # -Wno-restrict: GCC 12 false positives inside libstdc++'s char_traits at -O2
  # (GCC bug 105329), which -Werror would make fatal.
  target_compile_options(unetback_warnings INTERFACE -Wduplicated-cond -Wlogical-op -Wno-restrict)
endif()

# Adds every immediate subfolder that has a CMakeLists.txt (so each component
# owns its own build file).
macro(unetback_add_subdirs)
  file(GLOB _children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _children)
  foreach(_child IN LISTS _children)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt)
      add_subdirectory(${_child})
    endif()
  endforeach()
endmacro()
# -Wnull-dereference is left out: with optimisation, GCC 12 reports it inside
# inlined Boost.Asio code (scheduler.ipp), which -Werror would make fatal.
