# UNETBACK_SANITIZE=address,undefined (debug preset) or thread (tsan preset).
if(UNETBACK_SANITIZE)
  set(_san "-fsanitize=${UNETBACK_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(${_san})
  if(UNETBACK_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns that TSan does not model atomic_thread_fence (used inside
    # Boost.Asio); the fences we rely on are paired with atomics TSan sees.
    add_compile_options(-Wno-tsan)
  endif()
endif()
if(UNETBACK_COVERAGE)
  # atomic counters: the data path's tests run worker threads
  add_compile_options(--coverage -fprofile-update=atomic)
  add_link_options(--coverage)
endif()
if(UNETBACK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "UNETBACK_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# unetback_add_fuzzer(NAME SOURCES... CORPUS dir LIBS ...)
# Under clang+UNETBACK_FUZZ: a libFuzzer binary. Always: a replay test (label
# fuzz-replay) that runs the harness over its committed corpus with a small driver.
function(unetback_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS" "SOURCES;LIBS" ${ARGN})
  if(UNETBACK_FUZZ)
    add_executable(fuzz_${name} ${F_SOURCES})
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBS} unetback_warnings)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  endif()
  add_executable(replay_${name} ${F_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
  target_link_libraries(replay_${name} PRIVATE ${F_LIBS} unetback_warnings)
  add_test(NAME fuzz_replay.${name} COMMAND replay_${name} ${F_CORPUS})
  set_tests_properties(fuzz_replay.${name} PROPERTIES LABELS fuzz-replay)
endfunction()
