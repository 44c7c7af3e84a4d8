# The root project's install (`cmake --install build --prefix PREFIX`): the host tools and the GDB
# plugin. The agent is not installed from here (its libraries in this build are the host port's):
# a firmware gets it from target_agent's own install or sources (docs/agent.md, "Build").
#   bin/arenascope-plan, bin/arenascope-viewer (when built), bin/arenascope (the standalone tool:
#   a launcher for the plugin's script below), share/arenascope/gdbplugin/ (arenascope.py, the
#   arenascope script and the arenascope_plugin package: `source PREFIX/share/arenascope/gdbplugin/arenascope.py`).
include(GNUInstallDirs)
set(_plugin_dir ${CMAKE_INSTALL_DATADIR}/arenascope/gdbplugin)
install(TARGETS arenascope-plan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET arenascope-viewer)
  install(TARGETS arenascope-viewer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/gdbplugin/arenascope.py DESTINATION ${_plugin_dir})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/gdbplugin/arenascope DESTINATION ${_plugin_dir})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/gdbplugin/arenascope_plugin DESTINATION ${_plugin_dir}
        PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
# The plugin finds VERSION two folders above its package (gdbplugin/arenascope_plugin/version.py):
# share/arenascope/VERSION in the install.
install(FILES ${PROJECT_SOURCE_DIR}/VERSION DESTINATION ${CMAKE_INSTALL_DATADIR}/arenascope)
# Python puts a script's own folder first on sys.path, so bin/ holds a launcher that runs the
# script where it is, beside its package.
file(RELATIVE_PATH _bin_to_plugin /${CMAKE_INSTALL_BINDIR} /${_plugin_dir})
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/install/arenascope
     "#!/bin/sh\n# arenascope's standalone tool (installed by cmake/install_tools.cmake): runs the GDB plugin's script.\n"
     "exec \"$(dirname \"$(readlink -f \"$0\")\")/${_bin_to_plugin}/arenascope\" \"$@\"\n")
install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/install/arenascope DESTINATION ${CMAKE_INSTALL_BINDIR})
