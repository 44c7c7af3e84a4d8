# Toolchain file: cross-compile for Cortex-M4F with Debian's gcc-arm-none-eabi (12.2).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy)
set(CMAKE_SIZE arm-none-eabi-size)
# No OS, no crt0: test compiles build a static library instead of linking a program.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(ARENASCOPE_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=softfp -mfpu=fpv4-sp-d16")
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
