"""Training on a real out-of-tree PyTorch device: torchvulkan's ``vulkan`` on Mesa's lavapipe (a CPU Vulkan driver)."""
