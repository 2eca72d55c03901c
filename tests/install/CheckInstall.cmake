# The install tree: `cmake --install` into a fresh prefix puts every file a desktop install needs
# in its place, and the installed programs and Python module run from there.
#   cmake -DBINARY_DIR=... -DPREFIX=... -DPYTHON=... -DPYTHON_DIR=... -DGUI=ON|OFF -P CheckInstall.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE result OUTPUT_QUIET)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "cmake --install failed: ${result}")
endif()

set(expected bin/placer share/man/man1/placer.1.gz share/bash-completion/completions/placer
             share/placement-explorer/models/tiny_resnet.onnx
             share/placement-explorer/examples/residual_block.relay)
if(GUI)
    list(APPEND expected bin/placement-explorer share/man/man1/placement-explorer.1.gz
         share/applications/placement-explorer.desktop
         share/mime/packages/placement-explorer.xml
         share/icons/hicolor/scalable/apps/placement-explorer.svg
         share/placement-explorer/translations/placement_explorer_de.qm
         share/placement-explorer/translations/placement_explorer_zh_CN.qm)
    foreach(size IN ITEMS 16 22 24 32 48 64 128 256 512)
        list(APPEND expected share/icons/hicolor/${size}x${size}/apps/placement-explorer.png)
    endforeach()
endif()
if(PYTHON_DIR)
    list(APPEND expected ${PYTHON_DIR}/placer/__init__.py ${PYTHON_DIR}/placer/__init__.pyi
         ${PYTHON_DIR}/placer/py.typed)
endif()
foreach(path IN LISTS expected)
    if(NOT EXISTS ${PREFIX}/${path})
        message(FATAL_ERROR "the install tree lacks ${path}")
    endif()
endforeach()

execute_process(COMMAND ${PREFIX}/bin/placer plan ${PREFIX}/share/placement-explorer/models/tiny_resnet.onnx
                        --devices a:vcpu,b:vcpu --rule Conv=a --fallback b --json
                RESULT_VARIABLE result OUTPUT_VARIABLE report)
if(NOT result EQUAL 0 OR NOT report MATCHES "\"copies\"")
    message(FATAL_ERROR "the installed placer did not plan: ${result}")
endif()

if(PYTHON_DIR)
    # The installed module, not the build tree's: it must say where it was imported from.
    execute_process(
        COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PYTHON_DIR}
                XDG_DATA_HOME=${PREFIX}/data
                ${PYTHON} -c "import placer; print(placer.__file__); m = placer.load('${PREFIX}/share/placement-explorer/models/tiny_resnet.onnx'); assert m.plan(devices='a:vcpu').run(iterations=1, reference=True).reference_check['ok']"
        RESULT_VARIABLE result OUTPUT_VARIABLE where ERROR_VARIABLE error)
    if(NOT result EQUAL 0)
        message(FATAL_ERROR "the installed module failed: ${error}")
    endif()
    string(FIND "${where}" "${PREFIX}/${PYTHON_DIR}/placer/" at)
    if(NOT at EQUAL 0)
        message(FATAL_ERROR "import placer found ${where}, not the installed module")
    endif()
endif()
file(REMOVE_RECURSE ${PREFIX})
