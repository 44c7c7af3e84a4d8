# What every libFuzzer project of arenascope's sets after its project() (planner/fuzz, viewer/fuzz;
# docs/fuzzing.md): clang is required (libFuzzer ships with it), RelWithDebInfo unless told,
# C++17, and SANITIZE, the ASan + UBSan flags each target compiles and links with.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "the fuzzers need clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(SANITIZE -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
