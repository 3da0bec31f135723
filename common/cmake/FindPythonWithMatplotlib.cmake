# Finds a Python 3 for the grader (standard library only) and the plots (matplotlib).
# python3 on PATH may lack matplotlib (a separate build) while Debian's python3-matplotlib
# installs for /usr/bin/python3, so every candidate is asked, and the first that imports
# matplotlib wins. Set REDUCTION_PYTHON to choose one yourself.
set(REDUCTION_PYTHON "" CACHE FILEPATH "Python 3 interpreter with matplotlib (empty: search)")

if(REDUCTION_PYTHON STREQUAL "")
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
    "/usr/bin/python3): the plots and their tests will fail. Install it (Debian: apt-get install "
    "python3-matplotlib) or pass -DREDUCTION_PYTHON=/path/to/python3.")
else()
  message(STATUS "reduction-labs: Python with matplotlib: ${REDUCTION_PYTHON}")
endif()
