# The dependency rules of docs/architecture.md, checked on the sources themselves (CTest:
# layering). The rooms and what each may include are the table below: one line a room, read
# from the bottom up. A file includes headers of its own room and of the rooms its line names;
# anything else (another room, Qt where Qt is not allowed) is a violation, named with its file
# and line.
#
# Run as
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/CheckLayering.cmake
# or print the table (scripts/layout.sh reads it):
#   cmake -DSOURCE_DIR=<repo> -DPRINT=1 -P tests/layering/CheckLayering.cmake
cmake_minimum_required(VERSION 3.25)

# room | the rooms it may include | Qt allowed | what it holds (docs/architecture.md's table)
# A room is a folder; an include names a room by the folder at its start ("ir/Graph.h" is
# core/ir, "backends/cpu/CpuDevice.h" is backends/cpu, "views/GraphScene.h" is views,
# "gui/MainWindow.h" is app/gui, "cli/PlacerCli.h" is app/cli).
set(rooms
    "core/ir||no|the data model: Graph, Node, TensorType (symbolic dims), DeviceSet, the op registry and shape functions, the hooks other rooms fill"
    "core/io|core/ir|no|model readers and writers: Relay text, ONNX (sequences, run-time shapes), JSON graph, .npy, JSON"
    "core/plan|core/ir core/io|no|the planner, memory plan, cost model, auto placement, splits, pipeline stages"
    "core/kernels|core/ir|no|what every backend's kernels share: element, indexing and signal functors, op geometry, kernel tables"
    "core/device|core/ir core/kernels|no|the Device interface, the registry backends announce themselves to, mapping, events, work queues, the ranks' transport interface"
    "core/vm|core/ir core/plan core/kernels core/device|no|bytecode, schedule, the executor (load, dispatch, ranks, run-time shapes), memory checks, reference run, calibration"
    "core/passes|core/ir core/plan core/kernels core/device|no|optimisations after placement, one pass a file, run by the pass manager"
    "core/report|core/ir core/io core/plan core/kernels core/device core/vm core/passes|no|what people and tools read of a plan and a run: plan report, exports, run report, Chrome trace"
    "core/store|core/ir core/io core/plan core/device core/vm core/report|no|the SQLite workspace: plans, runs, costs, calibrations, drafts"
    "core/session|core/ir core/io core/plan core/kernels core/device core/vm core/passes core/report core/store|no|the one pipeline every front end calls: load, plan, re-plan, run, generate, calibrate, record"
    "backends/cpu|core/ir core/kernels core/device|no|the host CPU and virtual CPUs: oneDNN and our own loops, the constant evaluator"
    "backends/cuda|core/ir core/kernels core/device|no|the CUDA backend: devices, cuBLAS/cuDNN and hand-written kernels"
    "backends/mpi|core/ir core/device|no|the transport between ranks, over MPI"
    "backends|core/ir core/device backends/cpu backends/cuda backends/mpi|no|every backend a program links, and its start and end as a rank"
    "views|core/ir core/report core/session|yes|Qt widgets over the session: canvas, palette, panels, timeline"
    "app/cli|core/ir core/io core/plan core/device core/vm core/report core/store core/session backends|no|`placer`, the command line"
    "app/gui|core/ir core/report core/store core/session views|yes|`placement-explorer`, the desktop application"
    "python|core/ir core/io core/plan core/device core/report core/store core/session backends|no|the `placer` Python module (pybind11)")

# The room an include path names, or "" for a system or third-party header.
function(room_of_include path out)
    set(result "")
    if(path MATCHES "^(ir|io|plan|kernels|device|vm|passes|report|store|session)/")
        set(result "core/${CMAKE_MATCH_1}")
    elseif(path MATCHES "^core/(ir|io|plan|kernels|device|vm|passes|report|store|session)/")
        set(result "core/${CMAKE_MATCH_1}")
    elseif(path MATCHES "^backends/(cpu|cuda|mpi)/")
        set(result "backends/${CMAKE_MATCH_1}")
    elseif(path MATCHES "^backends/[A-Za-z]+\\.h$")
        set(result "backends")
    elseif(path MATCHES "^views/")
        set(result "views")
    elseif(path MATCHES "^gui/")
        set(result "app/gui")
    elseif(path MATCHES "^cli/")
        set(result "app/cli")
    elseif(path MATCHES "^(Q[A-Za-z]*|Qt[A-Za-z]*/.*)$")
        set(result "Qt")
    endif()
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

if(PRINT)
    foreach(rule IN LISTS rooms)
        string(REPLACE "|" ";" fields "${rule}")
        list(GET fields 0 room)
        list(GET fields 1 allowed)
        list(GET fields 3 what)
        message("${room}|${allowed}|${what}")
    endforeach()
    return()
endif()

set(violations "")
set(known_rooms "")
foreach(rule IN LISTS rooms)
    string(REPLACE "|" ";" fields "${rule}")
    list(GET fields 0 room)
    list(APPEND known_rooms "${room}")
endforeach()

# Every folder with sources belongs to a room: a new folder must be added to the table.
file(GLOB_RECURSE all_sources RELATIVE "${SOURCE_DIR}"
     "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/backends/*.h"
     "${SOURCE_DIR}/backends/*.cpp" "${SOURCE_DIR}/backends/*.cu" "${SOURCE_DIR}/views/*.h"
     "${SOURCE_DIR}/views/*.cpp" "${SOURCE_DIR}/app/*.h" "${SOURCE_DIR}/app/*.cpp"
     "${SOURCE_DIR}/python/*.h" "${SOURCE_DIR}/python/*.cpp")
foreach(source IN LISTS all_sources)
    get_filename_component(folder "${source}" DIRECTORY)
    if(folder MATCHES "^python")
        set(folder "python")
    endif()
    if(NOT folder IN_LIST known_rooms)
        string(APPEND violations "  ${source}: in '${folder}', a folder that is no room (add it "
                                 "to the table in tests/layering/CheckLayering.cmake)\n")
    endif()
endforeach()

foreach(rule IN LISTS rooms)
    string(REPLACE "|" ";" fields "${rule}")
    list(GET fields 0 room)
    list(GET fields 1 allowed)
    list(GET fields 2 qt)
    string(REPLACE " " ";" allowed "${allowed}")
    list(APPEND allowed "${room}")
    if(qt STREQUAL "yes")
        list(APPEND allowed "Qt")
    endif()
    if(room STREQUAL "python")
        file(GLOB_RECURSE files "${SOURCE_DIR}/python/*.h" "${SOURCE_DIR}/python/*.cpp")
    else()
        # The room's own files, not those of rooms inside it (backends/cpu is not backends).
        file(GLOB files "${SOURCE_DIR}/${room}/*.h" "${SOURCE_DIR}/${room}/*.cpp"
             "${SOURCE_DIR}/${room}/*.cu" "${SOURCE_DIR}/${room}/*.cuh")
    endif()
    foreach(file IN LISTS files)
        file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
        foreach(line IN LISTS lines)
            if(NOT line MATCHES "include *[<\"]([^>\"]+)[>\"]")
                continue()
            endif()
            room_of_include("${CMAKE_MATCH_1}" target)
            if(target STREQUAL "" OR target IN_LIST allowed)
                continue()
            endif()
            file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
            string(APPEND violations "  ${relative}: ${line} (${room} may not include ${target})\n")
        endforeach()
        if(room MATCHES "^core/")
            file(STRINGS "${file}" defines REGEX "PLACER_HAVE_(CUDA|MPI)")
            if(defines)
                file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
                string(APPEND violations "  ${relative}: core names a backend (PLACER_HAVE_*)\n")
            endif()
        endif()
    endforeach()
endforeach()

if(violations)
    message(FATAL_ERROR "layering: these includes cross the rules of docs/architecture.md "
                        "(the table in tests/layering/CheckLayering.cmake):\n${violations}")
endif()
list(LENGTH known_rooms count)
message(STATUS "layering: the ${count} rooms include only the rooms the table allows them")
