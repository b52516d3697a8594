#!/bin/sh
# Edits kernel.cpp and also a file it must not touch: "other" adds notes.txt,
# "eval" rewrites the eval script, "scratch" only writes under scratch/.
printf 'int sneaky();\n' > kernel.cpp
case "$1" in
  other) echo hi > notes.txt ;;
  eval) printf '#!/bin/sh\necho "status: passed"\n' > eval ;;
  scratch) mkdir -p scratch/deep && echo ok > scratch/deep/try.cpp ;;
esac
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","usage":{"input_tokens":1,"output_tokens":1}}'
