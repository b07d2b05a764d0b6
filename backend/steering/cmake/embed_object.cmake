# cmake -DINPUT=file.o -DOUTPUT=file.cpp -DSYMBOL=name -P embed_object.cmake
# Writes a C++ source defining `unetback::steering::detail::SYMBOL` (the
# bytes of INPUT) and `SYMBOL_size`, so the BPF object ships inside unetbackd.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by embed_object.cmake: do not edit.\n"
"#include <cstddef>\n\n"
"namespace unetback::steering::detail {\n"
"extern const unsigned char ${SYMBOL}[];\n"
"extern const std::size_t ${SYMBOL}_size;\n"
"alignas(8) const unsigned char ${SYMBOL}[] = {\n${bytes}};\n"
"const std::size_t ${SYMBOL}_size = ${size};\n"
"}  // namespace unetback::steering::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
