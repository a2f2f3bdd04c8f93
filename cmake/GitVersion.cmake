# Writes OUT (version.cpp) from IN with the source tree's git hash, at build time (not only at
# configure time, so that a build folder reused across commits records the commit it built).
# The file is rewritten only when its text changes, so an unchanged hash rebuilds nothing.
# -DIN=... -DOUT=... -DROOT=... -DVERSION=...
if(DEFINED ENV{CISA_GIT_HASH})
  # A copy of the tree without its own git history (e.g. the GPU machine's) is told its commit.
  set(CISA_GIT_HASH "$ENV{CISA_GIT_HASH}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${ROOT}
                  OUTPUT_VARIABLE CISA_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${ROOT}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT CISA_GIT_HASH)
    set(CISA_GIT_HASH "unknown")
  elseif(dirty)
    set(CISA_GIT_HASH "${CISA_GIT_HASH}-dirty")
  endif()
endif()
set(PROJECT_VERSION "${VERSION}")
configure_file(${IN} ${OUT} @ONLY)
