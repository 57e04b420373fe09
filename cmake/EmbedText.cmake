# Writes a C++ header holding a text file's bytes as a char array, so a source file (here the
# embedded Python helper, src/python/kernel_helper.py) stays a real file of its own language.
# Usage: cmake -DIN=<file> -DOUT=<header> -DNAME=<identifier> -P cmake/EmbedText.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes a line keeps the header readable in a diff of the build tree.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " bytes "${bytes}")
get_filename_component(src "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "// Generated from ${src} by cmake/EmbedText.cmake at build time; edit the source, not this.\n"
  "#pragma once\n\n"
  "namespace nvfp4 {\n"
  "inline constexpr char ${NAME}[] = {\n    ${bytes}0x00};\n"
  "}  // namespace nvfp4\n")
# Replaced only when it changed: an unchanged helper recompiles nothing.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
