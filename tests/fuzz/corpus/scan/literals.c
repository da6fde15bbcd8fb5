char c = '"'; int x = 1'000;
#include "after.h"
// x \n#include "commented.h"
