# The agent's install (ARENASCOPE_INSTALL, on when target_agent is the top-level project):
#   lib/libarenascope_{agent,fault,tflm_recorder}.a, include/arenascope/*.h, include/arenascope_port.h
#   (the port this build chose), include/arenascope_tflm*.h, lib/cmake/arenascope/ (find_package:
#   arenascope::agent, ::fault, ::tflm_adapter), lib/pkgconfig/arenascope-{agent,fault,tflm}.pc and
#   share/arenascope/arenascope_abi_check.{c,cpp}.
# The libraries are machine code for ONE core and float ABI (the toolchain file's CPU flags): the
# ABI check, a source that find_package adds to every target linking arenascope::agent (and that a
# Makefile compiles, pkg-config variable abi_check), fails that target's compile with #error when
# its predefined macros for architecture, FPU and calling convention differ from this build's.
# The linker alone would not stop every mismatch: GNU ld refuses hard-float with soft-float
# objects and ARMv8-M Baseline with ARMv7E-M, but links Cortex-M4 code into a Cortex-M0 firmware
# without a word (Thumb-2 instructions that fault on the M0 at run time).
include(CMakePackageConfigHelpers)
set(_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/arenascope)
set(_datadir ${CMAKE_INSTALL_DATADIR}/arenascope)

install(TARGETS arenascope_agent arenascope_fault arenascope_tflm_recorder EXPORT arenascope-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/arenascope DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ports/${_port}/arenascope_port.h adapters/tflm/arenascope_tflm.h
              adapters/tflm/arenascope_tflm_recorder.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT arenascope-targets NAMESPACE arenascope:: DESTINATION ${_cmakedir})

# What this build compiles for, from the compiler itself: the flags and the predefined macros that
# say architecture, profile, instruction set, FPU, float calling convention and pointer size.
separate_arguments(_cflags UNIX_COMMAND "${CMAKE_C_FLAGS}")
execute_process(COMMAND ${CMAKE_C_COMPILER} ${_cflags} -dM -E -x c ${CMAKE_CURRENT_LIST_DIR}/empty.h
                OUTPUT_VARIABLE _macros RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${CMAKE_C_COMPILER} ${CMAKE_C_FLAGS} -dM -E failed (${_rc}): cannot record the "
                      "install's target ABI")
endif()
set(ARENASCOPE_ABI_CHECKS "")
foreach(m __ARM_ARCH __ARM_ARCH_PROFILE __ARM_ARCH_ISA_THUMB __ARM_ARCH_ISA_ARM __ARM_ARCH_6M__ __ARM_ARCH_7M__
          __ARM_ARCH_7EM__ __ARM_ARCH_8M_BASE__ __ARM_ARCH_8M_MAIN__ __ARM_ARCH_8_1M_MAIN__ __ARM_FP __ARM_PCS_VFP
          __ARM_FEATURE_DSP __ARM_FEATURE_MVE __SIZEOF_POINTER__ __x86_64__ __i386__ __aarch64__ __riscv_xlen)
  if(_macros MATCHES "#define ${m} ([^\n]*)")
    string(APPEND ARENASCOPE_ABI_CHECKS "#if !defined(${m}) || ${m} != ${CMAKE_MATCH_1}\n"
           "#error \"arenascope: ${m} differs from the installed libraries' (${m} ${CMAKE_MATCH_1}): @ARENASCOPE_ABI_WHAT@\"\n#endif\n")
  else()
    string(APPEND ARENASCOPE_ABI_CHECKS "#ifdef ${m}\n"
           "#error \"arenascope: ${m} is defined here, not for the installed libraries: @ARENASCOPE_ABI_WHAT@\"\n#endif\n")
  endif()
endforeach()
set(ARENASCOPE_ABI_WHAT "built with '${CMAKE_C_FLAGS}' (${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}); install arenascope with this firmware's CPU flags or build it from source (docs/agent.md)")
set(ARENASCOPE_C_FLAGS_BUILT "${CMAKE_C_FLAGS}")
string(CONFIGURE "${ARENASCOPE_ABI_CHECKS}" ARENASCOPE_ABI_CHECKS @ONLY)
foreach(ext c cpp)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/arenascope_abi_check.c.in
                 ${CMAKE_CURRENT_BINARY_DIR}/arenascope_abi_check.${ext} @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/arenascope_abi_check.${ext} DESTINATION ${_datadir})
endforeach()

set(ARENASCOPE_PORT_BUILT ${_port})
set(ARENASCOPE_DATADIR ${_datadir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/arenascope-config.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/arenascope-config.cmake
                              INSTALL_DESTINATION ${_cmakedir} PATH_VARS ARENASCOPE_DATADIR)
# 0.y.z: a minor release may change the API (Semantic Versioning); from 1.0.0 on, the major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_compat SameMinorVersion)
else()
  set(_compat SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/arenascope-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ${_compat})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/arenascope-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/arenascope-config-version.cmake DESTINATION ${_cmakedir})

# pkg-config, for Makefile users: one file a library, each naming the libraries it needs. Each
# finds the prefix from its own folder (${pcfiledir}), so an installed tree can move: as many
# ".." as LIBDIR/pkgconfig has levels (lib/pkgconfig: ../..; a multiarch lib/x86_64-linux-gnu/
# pkgconfig: ../../..). A dir given absolute is written as it is.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(STATUS "arenascope: CMAKE_INSTALL_LIBDIR is absolute: the .pc files are not relocatable")
  set(_pc_prefix "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _pc_up "/_/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_")
  string(REGEX REPLACE "/$" "" _pc_up "${_pc_up}")
  set(_pc_prefix "\${pcfiledir}/${_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR DATADIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(_pc_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(_pc_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
foreach(pc "agent;arenascope_agent;;the descriptor agent"
           "fault;arenascope_fault;arenascope-agent;HardFault post-mortem capture"
           "tflm;arenascope_tflm_recorder;arenascope-agent;the TFLM adapter's recorder")
  list(GET pc 0 PC_NAME)
  list(GET pc 1 PC_LIB)
  list(GET pc 2 PC_REQUIRES)
  list(GET pc 3 PC_WHAT)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/arenascope.pc.in ${CMAKE_CURRENT_BINARY_DIR}/arenascope-${PC_NAME}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/arenascope-${PC_NAME}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
