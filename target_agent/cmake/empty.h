/* Empty on purpose: target_agent/cmake/install.cmake preprocesses it to list the compiler's
 * predefined macros (-dM -E) for the install's ABI check. */
