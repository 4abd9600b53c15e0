# Turn a file into a C source defining a NUL-terminated char array.
# Usage: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE "${OUT}"
  "/* Generated from ${IN} by cmake/embed.cmake; do not edit. */\n"
  "const char ${NAME}[] = {${body}0x00};\n")
