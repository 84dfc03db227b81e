#!/bin/sh
# A test solver that never answers in time.
exec sleep 10
