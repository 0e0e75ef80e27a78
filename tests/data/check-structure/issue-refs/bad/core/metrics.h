#pragma once
// What a lossy routing policy changed (issue 11, part 5).
