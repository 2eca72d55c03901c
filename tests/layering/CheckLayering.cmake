# The dependency rules of DESIGN.md §2, checked on the sources themselves (CTest: layering):
# core/ includes nothing from Qt, views/, app/ or cuda/; views/ includes nothing from app/ or
# cuda/; cuda/ includes nothing from Qt, views/ or app/. Run as
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/CheckLayering.cmake
# Fails with every offending include, file and line.
cmake_minimum_required(VERSION 3.25)

set(rules
    "core|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|cli/.*|cuda/.*)[>\"]"
    "views|#include *[<\"](gui/.*|cli/.*|cuda/.*)[>\"]"
    "cuda|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|cli/.*)[>\"]")
set(violations "")
foreach(rule IN LISTS rules)
    string(FIND "${rule}" "|" bar)
    string(SUBSTRING "${rule}" 0 ${bar} folder)
    math(EXPR start "${bar} + 1")
    string(SUBSTRING "${rule}" ${start} -1 pattern)
    file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cpp"
         "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
        foreach(line IN LISTS lines)
            if(line MATCHES "${pattern}")
                file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
                string(APPEND violations "  ${relative}: ${line}\n")
            endif()
        endforeach()
        file(STRINGS "${file}" defines REGEX "PLACER_HAVE_CUDA")
        if(folder STREQUAL "core" AND defines)
            file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
            string(APPEND violations "  ${relative}: mentions PLACER_HAVE_CUDA\n")
        endif()
    endforeach()
endforeach()
if(violations)
    message(FATAL_ERROR "layering: these includes cross the dependency rules of DESIGN.md §2 "
                        "(core/ below views/ and cuda/, both below app/):\n${violations}")
endif()
message(STATUS "layering: core/, views/ and cuda/ include only what lies below them")
