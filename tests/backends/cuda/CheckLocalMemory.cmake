# Per-thread local memory ("stack frame") of every CUDA kernel, read from ptxas's resource report
# for one architecture. A GPU's driver reserves a kernel's frame for every thread the GPU can
# hold (frame x threads per SM x SMs: 1 KiB is 277 MB on an H100), at the first launch and
# counted nowhere, so no kernel may keep large arrays there: state of that size belongs in
# scratch memory from the device's allocator (IndexingStep::scratchBytes).
#
#   cmake -DNVCC=... -DSOURCE_DIR=... -DWORK_DIR=... -DARCH=90 -DLIMIT=1024 -P CheckLocalMemory.cmake
foreach(var NVCC SOURCE_DIR WORK_DIR ARCH LIMIT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "CheckLocalMemory.cmake needs -D${var}=...")
    endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(
    COMMAND "${NVCC}" -O2 -DNDEBUG "-DPLACER_CUDA_ARCHITECTURES=\"${ARCH}\""
            "--generate-code=arch=compute_${ARCH},code=[sm_${ARCH}]" -Xptxas -v
            --expt-relaxed-constexpr -std=c++17 "-I${SOURCE_DIR}" "-I${SOURCE_DIR}/core" -x cu
            -c "${SOURCE_DIR}/backends/cuda/Launch.cu" -o "${WORK_DIR}/Launch.o"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE report
    ERROR_VARIABLE report)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "nvcc failed on backends/cuda/Launch.cu:\n${report}")
endif()

string(REPLACE "\n" ";" lines "${report}")
set(kernel "")
set(kernels 0)
set(largest 0)
set(largest_kernel "")
set(over "")
foreach(line IN LISTS lines)
    if(line MATCHES "Compiling entry function '([^']+)'")
        set(kernel "${CMAKE_MATCH_1}")
    elseif(line MATCHES "([0-9]+) bytes stack frame" AND NOT kernel STREQUAL "")
        set(frame ${CMAKE_MATCH_1})
        math(EXPR kernels "${kernels} + 1")
        if(frame GREATER largest)
            set(largest ${frame})
            set(largest_kernel "${kernel}")
        endif()
        if(frame GREATER LIMIT)
            list(APPEND over "${frame} bytes: ${kernel}")
        endif()
        set(kernel "")
    endif()
endforeach()

if(kernels EQUAL 0)
    message(FATAL_ERROR "ptxas reported no kernels; its report was:\n${report}")
endif()
# Demangled where c++filt is at hand, for the message.
find_program(CXXFILT c++filt)
if(CXXFILT AND NOT largest_kernel STREQUAL "")
    execute_process(COMMAND "${CXXFILT}" "${largest_kernel}" OUTPUT_VARIABLE largest_kernel
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
math(EXPR h100_mb "${largest} * 2048 * 132 / 1000000")
message(STATUS "${kernels} kernels for sm_${ARCH}; the largest frame is ${largest} bytes a thread "
               "(${largest_kernel}), about ${h100_mb} MB reserved on an H100")
if(over)
    list(JOIN over "\n  " listed)
    message(FATAL_ERROR "kernels keep more than ${LIMIT} bytes a thread in local memory:\n  ${listed}")
endif()
