# Finds a Python 3 for the grader (standard library only) and the plots (matplotlib).
# python3 on PATH may lack matplotlib (a separate build) while Debian's python3-matplotlib
# installs for /usr/bin/python3, so every candidate is asked, and the first that imports
# matplotlib wins (tools/bootstrap.sh's reduction_python_with_matplotlib searches the same).
# Set REDUCTION_PYTHON to choose one yourself: it is asked too, and one that cannot import
# matplotlib stops the configure. Not a fallback with a warning: a warning scrolls past, and the
# plots, their tests and the main job would then fail later with an ImportError, far from the
# choice that caused it.
set(REDUCTION_PYTHON "" CACHE FILEPATH "Python 3 interpreter with matplotlib (empty: search)")

if(NOT REDUCTION_PYTHON STREQUAL "")
  execute_process(COMMAND "${REDUCTION_PYTHON}" -c "import matplotlib"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE why)
  if(NOT rc EQUAL 0)
    string(STRIP "${why}" why)
    string(REGEX REPLACE ".*\n" "" why "${why}")   # the error's last line, or why it did not start
    if(why STREQUAL "")
      set(why "${rc}")
    endif()
    message(FATAL_ERROR "reduction-labs: REDUCTION_PYTHON=${REDUCTION_PYTHON} cannot import matplotlib "
      "(${why}). Install matplotlib for it (Debian: apt-get install python3-matplotlib, for "
      "/usr/bin/python3), or configure with -DREDUCTION_PYTHON= (empty) and the build searches python3 "
      "on PATH, /usr/bin/python3 and /usr/local/bin/python3 for one that has it.")
  endif()
else()
  find_program(reduction_path_python NAMES python3 NO_CACHE)
  set(candidates "${reduction_path_python}" /usr/bin/python3 /usr/local/bin/python3)
  foreach(candidate IN LISTS candidates)
    if(candidate AND EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import matplotlib"
                      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(REDUCTION_PYTHON "${candidate}" CACHE FILEPATH "Python 3 interpreter with matplotlib" FORCE)
        break()
      endif()
    endif()
  endforeach()
endif()

if(REDUCTION_PYTHON STREQUAL "")
  # The grader needs only the standard library: fall back to any Python 3, and let the plot
  # tests fail with matplotlib's ImportError, which says what is missing.
  set(REDUCTION_PYTHON "${reduction_path_python}")
  message(WARNING "reduction-labs: no Python 3 with matplotlib found (tried python3 on PATH, "
    "/usr/bin/python3, /usr/local/bin/python3): the plots and their tests will fail. Install it "
    "(Debian: apt-get install python3-matplotlib) or pass -DREDUCTION_PYTHON=/path/to/python3.")
else()
  message(STATUS "reduction-labs: Python with matplotlib: ${REDUCTION_PYTHON}")
endif()
