# reduction_lab(<folder> <student file>): declares one lab. Builds its skeleton (labs/<folder>)
# and/or its reference (solutions/<folder>) as a loadable module named lab<NN>_<name>, which the
# test runner, the benchmark and the grader load by path. Adding a lab is its two folders and
# one reduction_lab() line.
define_property(GLOBAL PROPERTY REDUCTION_LAB_FOLDERS
  BRIEF_DOCS "lab folders in course order" FULL_DOCS "Filled by reduction_lab().")

set(REDUCTION_LAB_COMPILE_OPTIONS
  $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

function(reduction_add_lab_module target source output_dir output_name)
  add_library(${target} MODULE "${source}")
  target_link_libraries(${target} PRIVATE reduction::lab_api)
  target_compile_options(${target} PRIVATE ${REDUCTION_LAB_COMPILE_OPTIONS})
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME "${output_name}"
    LIBRARY_OUTPUT_DIRECTORY "${output_dir}")
endfunction()

function(reduction_lab folder student_file)
  if(NOT folder MATCHES "^([0-9][0-9])_([a-z0-9_]+)$")
    message(FATAL_ERROR "reduction_lab: folder '${folder}' must look like 02_atomic")
  endif()
  set(number "${CMAKE_MATCH_1}")
  set(module "lab${number}_${CMAKE_MATCH_2}")
  set_property(GLOBAL APPEND PROPERTY REDUCTION_LAB_FOLDERS "${folder}")
  set_property(GLOBAL PROPERTY REDUCTION_LAB_${folder}_FILE "${student_file}")
  set_property(GLOBAL PROPERTY REDUCTION_LAB_${folder}_MODULE "${module}")
  if(REDUCTION_BUILD_LABS)
    reduction_add_lab_module(${module}_skeleton
      "${PROJECT_SOURCE_DIR}/labs/${folder}/${student_file}" "${PROJECT_BINARY_DIR}/labs" "${module}")
  endif()
  if(REDUCTION_BUILD_SOLUTIONS)
    reduction_add_lab_module(${module}_solution
      "${PROJECT_SOURCE_DIR}/solutions/${folder}/${student_file}" "${PROJECT_BINARY_DIR}/solutions" "${module}")
  endif()
endfunction()

# Writes <build>/reduction_labs.json: the labs, their modules, and the exact nvcc command line
# that builds one lab file into a module, so the grader compiles student files the way CMake does.
function(reduction_finish_labs)
  get_property(folders GLOBAL PROPERTY REDUCTION_LAB_FOLDERS)
  set(entries "")
  foreach(folder IN LISTS folders)
    get_property(file GLOBAL PROPERTY REDUCTION_LAB_${folder}_FILE)
    get_property(module GLOBAL PROPERTY REDUCTION_LAB_${folder}_MODULE)
    list(APPEND entries "    {\"folder\": \"${folder}\", \"file\": \"${file}\", \"module\": \"${module}\"}")
  endforeach()
  list(JOIN entries ",\n" entries)
  set(gencode "")
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
    list(APPEND gencode "\"-gencode=arch=compute_${arch},code=sm_${arch}\"")
  endforeach()
  list(JOIN gencode ", " gencode)
  set(reference_dir "${REDUCTION_REFERENCE_DIR}")
  if(reference_dir STREQUAL "" AND REDUCTION_BUILD_SOLUTIONS)
    set(reference_dir "${PROJECT_BINARY_DIR}/solutions")
  endif()
  file(WRITE "${PROJECT_BINARY_DIR}/reduction_labs.json"
"{
  \"source_dir\": \"${PROJECT_SOURCE_DIR}\",
  \"binary_dir\": \"${PROJECT_BINARY_DIR}\",
  \"reference_dir\": \"${reference_dir}\",
  \"nvcc\": \"${CMAKE_CUDA_COMPILER}\",
  \"module_flags\": [\"-std=c++17\", \"-O3\", \"-shared\", \"-Xcompiler=-fPIC,-fvisibility=hidden\", \"--cudart=shared\", \"-lineinfo\", ${gencode}],
  \"include_dirs\": [\"${PROJECT_SOURCE_DIR}/common/include\"],
  \"labs\": [
${entries}
  ]
}
")
endfunction()
