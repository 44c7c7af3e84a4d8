# The product's one version (VERSION at the repository root, one line MAJOR.MINOR.PATCH) into
# ARENASCOPE_VERSION: the CMake project's (the root's and target_agent's when it stands alone),
# every tool's --version, the GDB plugin's and each snapshot's (read by
# gdbplugin/arenascope_plugin/version.py), and the installed agent package's. Editing it reconfigures.
set(_arenascope_version_file ${CMAKE_CURRENT_LIST_DIR}/../VERSION)
file(STRINGS ${_arenascope_version_file} ARENASCOPE_VERSION LIMIT_COUNT 1)
if(NOT ARENASCOPE_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "VERSION: expected one line MAJOR.MINOR.PATCH, got '${ARENASCOPE_VERSION}'")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_arenascope_version_file})
