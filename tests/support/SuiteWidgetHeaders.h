// SuiteHeaders.h with QtWidgets, precompiled once for the suites of the window and its views
// (their compile definitions differ from the others', so they cannot share one header).
#pragma once

#include "SuiteHeaders.h"

#include <QtWidgets>
