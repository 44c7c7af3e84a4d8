# Warnings are errors on every target of the project's own build. arenascope_require_werror()
# (called last in each top-level project: the host build and the two firmware projects) stops
# the configuration when a target that compiles code has no -Werror in its compile options, so a
# new target cannot slip in without it. A target built from third-party sources may be exempted
# by setting its ARENASCOPE_WERROR_EXEMPT property to the reason; none is today (Dear ImGui,
# GLFW, fmt, nlohmann-json, flatbuffers and GoogleTest come from Debian's packages, prebuilt or
# header-only, and the flatc-generated header compiles with -Werror in the planner).
function(_arenascope_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _arenascope_targets_under(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(arenascope_require_werror)
  _arenascope_targets_under(${CMAKE_CURRENT_SOURCE_DIR} targets)
  set(missing "")
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_target_property(exempt ${t} ARENASCOPE_WERROR_EXEMPT)
    get_target_property(options ${t} COMPILE_OPTIONS)
    if(NOT exempt AND NOT "${options}" MATCHES "-Werror")
      list(APPEND missing ${t})
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR "these targets compile without -Werror: ${missing} (cmake/werror.cmake: every target of "
                        "the project's own build treats warnings as errors)")
  endif()
endfunction()
