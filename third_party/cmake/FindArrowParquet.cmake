# Apache Arrow's and Parquet's C++ libraries (the Parquet, Arrow IPC and CSV corpus readers).
# Debian 12 packages neither; the pyarrow wheel of the project's venv carries both, with their
# headers, as the torch wheel carries LibTorch. -DArrowParquet_ROOT=<prefix> (include/ and
# lib/ of an Arrow install) picks another. Defines ArrowParquet::arrow, ArrowParquet::parquet.
if(NOT ArrowParquet_ROOT AND EXISTS "${MLM_PYTHON}")
  execute_process(
    COMMAND "${MLM_PYTHON}" -c "import importlib.util as u, os; print(os.path.dirname(u.find_spec('pyarrow').origin))"
    OUTPUT_VARIABLE mlm_pyarrow_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE mlm_rc ERROR_QUIET)
  if(mlm_rc EQUAL 0 AND EXISTS "${mlm_pyarrow_dir}/include/arrow/api.h")
    set(ArrowParquet_INCLUDE_HINT "${mlm_pyarrow_dir}/include")
    set(ArrowParquet_LIBRARY_HINT "${mlm_pyarrow_dir}")
  endif()
elseif(ArrowParquet_ROOT)
  set(ArrowParquet_INCLUDE_HINT "${ArrowParquet_ROOT}/include")
  set(ArrowParquet_LIBRARY_HINT "${ArrowParquet_ROOT}/lib")
endif()
find_path(ArrowParquet_INCLUDE_DIR parquet/arrow/reader.h HINTS ${ArrowParquet_INCLUDE_HINT} NO_DEFAULT_PATH)
find_path(ArrowParquet_INCLUDE_DIR parquet/arrow/reader.h)
# The wheel ships only the versioned names (libarrow.so.2600), which find_library skips.
foreach(lib arrow parquet)
  file(GLOB mlm_candidates "${ArrowParquet_LIBRARY_HINT}/lib${lib}.so.[0-9]*")
  list(FILTER mlm_candidates EXCLUDE REGEX "\\.so\\.[0-9]+\\.")
  if(mlm_candidates)
    list(GET mlm_candidates 0 mlm_candidate)
    set(ArrowParquet_${lib}_LIBRARY "${mlm_candidate}" CACHE FILEPATH "lib${lib}")
  else()
    find_library(ArrowParquet_${lib}_LIBRARY ${lib})
  endif()
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ArrowParquet
  REQUIRED_VARS ArrowParquet_arrow_LIBRARY ArrowParquet_parquet_LIBRARY ArrowParquet_INCLUDE_DIR)
if(ArrowParquet_FOUND AND NOT TARGET ArrowParquet::arrow)
  add_library(ArrowParquet::arrow SHARED IMPORTED)
  set_target_properties(ArrowParquet::arrow PROPERTIES
    IMPORTED_LOCATION "${ArrowParquet_arrow_LIBRARY}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ArrowParquet_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${ArrowParquet_INCLUDE_DIR}")
  add_library(ArrowParquet::parquet SHARED IMPORTED)
  set_target_properties(ArrowParquet::parquet PROPERTIES
    IMPORTED_LOCATION "${ArrowParquet_parquet_LIBRARY}"
    INTERFACE_LINK_LIBRARIES ArrowParquet::arrow)
endif()
