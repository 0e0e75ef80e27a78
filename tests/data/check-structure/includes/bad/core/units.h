#pragma once
namespace fx { using Bytes = unsigned long; }
