# Debian's libsentencepiece-dev ships a pkg-config file but no CMake package.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_SENTENCEPIECE QUIET sentencepiece)
endif()
find_path(SentencePiece_INCLUDE_DIR sentencepiece_processor.h HINTS ${PC_SENTENCEPIECE_INCLUDE_DIRS})
find_library(SentencePiece_LIBRARY sentencepiece HINTS ${PC_SENTENCEPIECE_LIBRARY_DIRS})
find_library(SentencePiece_TRAIN_LIBRARY sentencepiece_train HINTS ${PC_SENTENCEPIECE_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SentencePiece
  REQUIRED_VARS SentencePiece_LIBRARY SentencePiece_TRAIN_LIBRARY SentencePiece_INCLUDE_DIR)
if(SentencePiece_FOUND AND NOT TARGET SentencePiece::SentencePiece)
  add_library(SentencePiece::SentencePiece INTERFACE IMPORTED)
  set_target_properties(SentencePiece::SentencePiece PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SentencePiece_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${SentencePiece_TRAIN_LIBRARY};${SentencePiece_LIBRARY}")
endif()
