# The dependency rules of DESIGN.md §2, checked on the sources themselves (CTest: layering).
#
# Between the top-level folders: core/ includes nothing from Qt, views/, app/, python/ or cuda/;
# views/ nothing from app/, python/ or cuda/; cuda/ nothing from Qt, views/, app/ or python/. The
# front ends (app/cli, app/gui, python/) are thin layers over core's session and never include
# each other.
#
# Inside core/, its folders are layers, from the bottom:
#   ir  <-  io  <-  plan  <-  runtime  <-  passes  <-  report  <-  store  <-  session
# and a file includes only its own layer and the layers below it: a model reader (io) never sees
# the runtime, the runtime never sees the passes that rewrite graphs for it (what a pass tells a
# kernel is a typed field of the node, ir/KernelHints.h), and nothing below the session knows it.
#
# Run as
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/CheckLayering.cmake
# Fails with every offending include, file and line.
cmake_minimum_required(VERSION 3.25)

set(rules
    "core|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|cli/.*|cuda/.*|python/.*)[>\"]"
    "views|#include *[<\"](gui/.*|cli/.*|cuda/.*|python/.*)[>\"]"
    "cuda|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|cli/.*|python/.*)[>\"]"
    "app/cli|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|python/.*)[>\"]"
    "app/gui|#include *[<\"](cli/.*|python/.*)[>\"]"
    "python|#include *[<\"](Q[A-Za-z]*|Qt[A-Za-z]*/.*|views/.*|gui/.*|cli/.*)[>\"]")
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

# core's own layers, bottom first: a file may include a header of its layer or of one before it.
set(layers ir io plan runtime passes report store session)
file(GLOB core_folders LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}/core" "${SOURCE_DIR}/core/*")
foreach(folder IN LISTS core_folders)
    if(IS_DIRECTORY "${SOURCE_DIR}/core/${folder}" AND NOT folder IN_LIST layers)
        string(APPEND violations "  core/${folder}/: a folder that is no layer (add it to the "
                                 "list in tests/layering/CheckLayering.cmake and DESIGN.md §2)\n")
    endif()
endforeach()
foreach(layer IN LISTS layers)
    list(FIND layers "${layer}" rank)
    file(GLOB_RECURSE files "${SOURCE_DIR}/core/${layer}/*.h" "${SOURCE_DIR}/core/${layer}/*.cpp")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include *\"[a-z]+/")
        foreach(line IN LISTS lines)
            if(NOT line MATCHES "include *\"([a-z]+)/")
                continue()
            endif()
            set(target "${CMAKE_MATCH_1}")
            list(FIND layers "${target}" target_rank)
            if(target_rank GREATER rank)
                file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
                string(APPEND violations
                       "  ${relative}: ${line} (${layer} lies below ${target})\n")
            endif()
        endforeach()
    endforeach()
endforeach()

if(violations)
    message(FATAL_ERROR "layering: these includes cross the dependency rules of DESIGN.md §2 "
                        "(core/ below views/ and cuda/, both below app/; inside core, "
                        "${layers} from the bottom):\n${violations}")
endif()
message(STATUS "layering: core/, views/ and cuda/ include only what lies below them, and "
               "core's layers (${layers}) only the layers below their own")
