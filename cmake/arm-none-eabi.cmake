# Toolchain file: cross-compile for a Cortex-M (Cortex-M4F unless ARENASCOPE_CPU says another) with
# Debian's gcc-arm-none-eabi (12.2).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy)
set(CMAKE_SIZE arm-none-eabi-size)
# No OS, no crt0: test compiles build a static library instead of linking a program.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The core: -DARENASCOPE_CPU=cortex-m0|m0plus|m3|m4|m7|m23|m33|m55 (default cortex-m4, the demo's
# mps2-an386), each with its FPU as Debian's newlib multilibs have it (soft float where it has none).
if(NOT ARENASCOPE_CPU)
  set(ARENASCOPE_CPU cortex-m4)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ARENASCOPE_CPU)
set(_arenascope_fpu_cortex-m4 "-mfloat-abi=softfp -mfpu=fpv4-sp-d16")
set(_arenascope_fpu_cortex-m7 "-mfloat-abi=softfp -mfpu=fpv5-d16")
set(_arenascope_fpu_cortex-m33 "-mfloat-abi=softfp -mfpu=fpv5-sp-d16")
set(_arenascope_fpu_cortex-m55 "-mfloat-abi=softfp")
if(NOT ARENASCOPE_CPU MATCHES "^cortex-m(0|0plus|3|4|7|23|33|55)$")
  message(FATAL_ERROR "ARENASCOPE_CPU=${ARENASCOPE_CPU}: use cortex-m0, cortex-m0plus, cortex-m3, cortex-m4, "
                      "cortex-m7, cortex-m23, cortex-m33 or cortex-m55")
endif()
if(DEFINED _arenascope_fpu_${ARENASCOPE_CPU})
  set(_arenascope_fpu "${_arenascope_fpu_${ARENASCOPE_CPU}}")
else()
  set(_arenascope_fpu "-mfloat-abi=soft")
endif()
set(ARENASCOPE_CPU_FLAGS "-mcpu=${ARENASCOPE_CPU} -mthumb ${_arenascope_fpu}")
set(CMAKE_C_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g")
# No --gc-sections: the debug info of dropped functions stays at address 0, where the vector
# table is, and GDB then names them in backtraces through a null call.
set(CMAKE_EXE_LINKER_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -nostartfiles --specs=nano.specs")
# Build with CMAKE_BUILD_TYPE=MinSizeRel (-Os, as the footprint budget is stated); -g (above)
# so GDB sees types and symbols.

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
