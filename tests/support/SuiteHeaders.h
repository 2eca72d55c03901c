// What nearly every suite includes, precompiled once for all of them (tests/CMakeLists.txt):
// Qt Test, the Qt classes the suites use most, and the standard library. Nothing of the
// project's, so that an edit to one of its headers rebuilds only the suites that include it.
// The window's suites get QtWidgets too (SuiteWidgetHeaders.h). Half of a suite's compile time
// was these headers.
#pragma once

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
