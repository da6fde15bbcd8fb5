#include "a.h"
#  include <b/c.h>
/* #include "no.h" */
"#include \"str.h\""
#inc\
lude "spliced.h"
  /* c */ #include_next <n.h>
#include MACRO
