/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * Placement new. arm-none-eabi has a C++ standard library (<new>); Debian 12's
 * riscv64-unknown-elf-g++ has none (no headers, no libstdc++), so the RV32 build declares what the
 * stand-in uses of <new> itself. The rest of the C++ runtime it needs (operator delete, which the
 * virtual destructors name; __cxa_pure_virtual; __cxa_atexit and __dso_handle) is main.cpp's.
 */
#pragma once
#include <stddef.h>

#if __has_include(<new>)
#include <new>
#else
inline void *operator new(size_t, void *where) noexcept
{
    return where;
}
inline void *operator new[](size_t, void *where) noexcept
{
    return where;
}
inline void operator delete(void *, void *) noexcept {}
inline void operator delete[](void *, void *) noexcept {}
#endif
