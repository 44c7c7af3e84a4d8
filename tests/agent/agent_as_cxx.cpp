// The agent's C source compiled as C++ (the agent must build as both): the second unit-test
// binary links this instead of the C library, so every test runs against the C++ build too.
#include "../../target_agent/src/arenascope_agent.c"
#include "../../target_agent/src/arenascope_fault.c"
