#pragma once
// Forwarding header, to be removed: the writer moved to mlm/data/store/store_writer.h. Only
// tests/train/prepared_store_training_test.cpp still includes this path (another change owns
// that file); once it names the new path, delete this file.
#include "mlm/data/store/store_writer.h"
