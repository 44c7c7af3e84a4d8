# Toolchain file: cross-compile for a 32-bit RISC-V core in machine mode (rv32imac, ilp32) with
# Debian's gcc-riscv64-unknown-elf (12.2) and picolibc-riscv64-unknown-elf (its C library and
# headers; Debian 12 has no C++ standard library for this target). The agent's RISC-V port
# (target_agent/ports/riscv) and tools/footprint.py --cores use it.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_OBJCOPY riscv64-unknown-elf-objcopy)
set(CMAKE_SIZE riscv64-unknown-elf-size)
# No OS, no crt0: test compiles build a static library instead of linking a program.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(ARENASCOPE_CPU_FLAGS "-march=rv32imac -mabi=ilp32 -mcmodel=medany --specs=picolibc.specs")
set(CMAKE_C_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${ARENASCOPE_CPU_FLAGS} -g")
# Nothing more to link a program with: CMake's link line carries the compile flags above already,
# and picolibc.specs given twice fails ("attempt to rename spec 'link' to already defined spec").
set(CMAKE_EXE_LINKER_FLAGS_INIT "")
