# UNETBACK_LINE_TABLES_ONLY (the gate's trees, tools/test): -g1 instead of the
# configuration's -g. Added as a compile option, so it follows -g on the command
# line and wins.
if(UNETBACK_LINE_TABLES_ONLY)
  add_compile_options(-g1)
endif()
