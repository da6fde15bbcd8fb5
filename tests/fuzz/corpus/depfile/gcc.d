out/a.o.tmp.1.2: /r/src/a.c /r/include/x.h \
 /r/include/with\ space.h /r/$$dollar.h
/r/include/x.h:
