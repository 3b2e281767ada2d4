"""A tiny Keras 3 classifier trained with model.fit, as a user's train.py would.

Usage: python keras_fit.py VERBOSE {healthy,diverge}
With KERAS_IMPL=tf_keras in the environment the same script runs on Keras 2 (tf_keras, TensorFlow).
The 'diverge' run uses SGD with a learning rate of 1e4 on logits: the loss becomes NaN in the first epoch.
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "torch")

# Keras 2 (tf.keras), in a side venv with tensorflow-cpu
if os.environ.get("KERAS_IMPL") == "tf_keras":
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tf_keras as keras
else:
    import keras
import numpy as np

verbose = int(sys.argv[1])
mode = sys.argv[2]
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(640, 8)).astype("float32")
y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype("int32")
x_val = rng.normal(size=(160, 8)).astype("float32")
y_val = (x_val[:, 0] + 0.5 * x_val[:, 1] > 0).astype("int32")
model = keras.Sequential(
    [keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)]
)
opt = keras.optimizers.Adam(1e-2) if mode == "healthy" else keras.optimizers.SGD(1e4)
model.compile(
    optimizer=opt,
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(x, y, validation_data=(x_val, y_val), epochs=6, batch_size=32, verbose=verbose)
print("test accuracy", model.evaluate(x_val, y_val, verbose=0)[1])
